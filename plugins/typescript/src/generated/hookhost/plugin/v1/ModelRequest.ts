// Original file: proto/v1/plugin.proto

import type { Message as _hookhost_plugin_v1_Message, Message__Output as _hookhost_plugin_v1_Message__Output } from '../../../hookhost/plugin/v1/Message';
import type { ToolSpec as _hookhost_plugin_v1_ToolSpec, ToolSpec__Output as _hookhost_plugin_v1_ToolSpec__Output } from '../../../hookhost/plugin/v1/ToolSpec';
import type { Long } from '@grpc/proto-loader';

export interface ModelRequest {
  'model'?: (string);
  'system'?: (string);
  'messages'?: (_hookhost_plugin_v1_Message)[];
  'tools'?: (_hookhost_plugin_v1_ToolSpec)[];
  'maxTokens'?: (number | string | Long);
  'temperature'?: (number | string);
  '_temperature'?: "temperature";
}

export interface ModelRequest__Output {
  'model'?: (string);
  'system'?: (string);
  'messages'?: (_hookhost_plugin_v1_Message__Output)[];
  'tools'?: (_hookhost_plugin_v1_ToolSpec__Output)[];
  'maxTokens'?: (string);
  'temperature'?: (number);
  '_temperature'?: "temperature";
}
