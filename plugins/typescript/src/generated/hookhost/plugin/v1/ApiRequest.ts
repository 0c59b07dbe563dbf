// Original file: proto/v1/plugin.proto

import type { ModelRequest as _hookhost_plugin_v1_ModelRequest, ModelRequest__Output as _hookhost_plugin_v1_ModelRequest__Output } from '../../../hookhost/plugin/v1/ModelRequest';
import type { Long } from '@grpc/proto-loader';

export interface ApiRequest {
  'sessionId'?: (string);
  'iteration'?: (number | string | Long);
  'request'?: (_hookhost_plugin_v1_ModelRequest | null);
}

export interface ApiRequest__Output {
  'sessionId'?: (string);
  'iteration'?: (string);
  'request'?: (_hookhost_plugin_v1_ModelRequest__Output);
}
