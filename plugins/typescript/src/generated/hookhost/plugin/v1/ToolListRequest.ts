// Original file: proto/v1/plugin.proto

import type { ToolSpec as _hookhost_plugin_v1_ToolSpec, ToolSpec__Output as _hookhost_plugin_v1_ToolSpec__Output } from '../../../hookhost/plugin/v1/ToolSpec';
import type { Long } from '@grpc/proto-loader';

export interface ToolListRequest {
  'sessionId'?: (string);
  'iteration'?: (number | string | Long);
  'tools'?: (_hookhost_plugin_v1_ToolSpec)[];
}

export interface ToolListRequest__Output {
  'sessionId'?: (string);
  'iteration'?: (string);
  'tools'?: (_hookhost_plugin_v1_ToolSpec__Output)[];
}
