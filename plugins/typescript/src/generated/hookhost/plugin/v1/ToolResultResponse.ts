// Original file: proto/v1/plugin.proto

import type { ToolResult as _hookhost_plugin_v1_ToolResult, ToolResult__Output as _hookhost_plugin_v1_ToolResult__Output } from '../../../hookhost/plugin/v1/ToolResult';

export interface ToolResultResponse {
  'result'?: (_hookhost_plugin_v1_ToolResult | null);
}

export interface ToolResultResponse__Output {
  'result'?: (_hookhost_plugin_v1_ToolResult__Output);
}
