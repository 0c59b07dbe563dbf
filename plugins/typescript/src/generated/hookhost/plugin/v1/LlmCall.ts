// Original file: proto/v1/plugin.proto

import type { ModelRequest as _hookhost_plugin_v1_ModelRequest, ModelRequest__Output as _hookhost_plugin_v1_ModelRequest__Output } from '../../../hookhost/plugin/v1/ModelRequest';
import type { ModelResponse as _hookhost_plugin_v1_ModelResponse, ModelResponse__Output as _hookhost_plugin_v1_ModelResponse__Output } from '../../../hookhost/plugin/v1/ModelResponse';
import type { Long } from '@grpc/proto-loader';

export interface LlmCall {
  'sessionId'?: (string);
  'iteration'?: (number | string | Long);
  'route'?: (string);
  'request'?: (_hookhost_plugin_v1_ModelRequest | null);
  'response'?: (_hookhost_plugin_v1_ModelResponse | null);
  'partial'?: (boolean);
}

export interface LlmCall__Output {
  'sessionId'?: (string);
  'iteration'?: (string);
  'route'?: (string);
  'request'?: (_hookhost_plugin_v1_ModelRequest__Output);
  'response'?: (_hookhost_plugin_v1_ModelResponse__Output);
  'partial'?: (boolean);
}
