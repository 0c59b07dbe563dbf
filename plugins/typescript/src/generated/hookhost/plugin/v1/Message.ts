// Original file: proto/v1/plugin.proto

import type { ToolCall as _hookhost_plugin_v1_ToolCall, ToolCall__Output as _hookhost_plugin_v1_ToolCall__Output } from '../../../hookhost/plugin/v1/ToolCall';

export interface Message {
  'role'?: (string);
  'content'?: (string);
  'toolCalls'?: (_hookhost_plugin_v1_ToolCall)[];
  'toolCallId'?: (string);
  'toolName'?: (string);
  'isError'?: (boolean);
}

export interface Message__Output {
  'role'?: (string);
  'content'?: (string);
  'toolCalls'?: (_hookhost_plugin_v1_ToolCall__Output)[];
  'toolCallId'?: (string);
  'toolName'?: (string);
  'isError'?: (boolean);
}
