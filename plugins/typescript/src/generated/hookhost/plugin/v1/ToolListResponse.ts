// Original file: proto/v1/plugin.proto

import type { ToolList as _hookhost_plugin_v1_ToolList, ToolList__Output as _hookhost_plugin_v1_ToolList__Output } from '../../../hookhost/plugin/v1/ToolList';

export interface ToolListResponse {
  'override'?: (_hookhost_plugin_v1_ToolList | null);
}

export interface ToolListResponse__Output {
  'override'?: (_hookhost_plugin_v1_ToolList__Output);
}
