// Original file: proto/v1/plugin.proto

import type { ModelResponse as _hookhost_plugin_v1_ModelResponse, ModelResponse__Output as _hookhost_plugin_v1_ModelResponse__Output } from '../../../hookhost/plugin/v1/ModelResponse';

export interface ModelResponseResponse {
  'response'?: (_hookhost_plugin_v1_ModelResponse | null);
}

export interface ModelResponseResponse__Output {
  'response'?: (_hookhost_plugin_v1_ModelResponse__Output);
}
