// Original file: proto/v1/plugin.proto

import type { ModelRequest as _hookhost_plugin_v1_ModelRequest, ModelRequest__Output as _hookhost_plugin_v1_ModelRequest__Output } from '../../../hookhost/plugin/v1/ModelRequest';
import type { Long } from '@grpc/proto-loader';

export interface LlmRequest {
  'sessionId'?: (string);
  'iteration'?: (number | string | Long);
  'route'?: (string);
  'request'?: (_hookhost_plugin_v1_ModelRequest | null);
}

export interface LlmRequest__Output {
  'sessionId'?: (string);
  'iteration'?: (string);
  'route'?: (string);
  'request'?: (_hookhost_plugin_v1_ModelRequest__Output);
}
