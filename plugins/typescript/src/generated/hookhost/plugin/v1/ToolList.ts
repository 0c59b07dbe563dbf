// Original file: proto/v1/plugin.proto

import type { ToolSpec as _hookhost_plugin_v1_ToolSpec, ToolSpec__Output as _hookhost_plugin_v1_ToolSpec__Output } from '../../../hookhost/plugin/v1/ToolSpec';

export interface ToolList {
  'tools'?: (_hookhost_plugin_v1_ToolSpec)[];
}

export interface ToolList__Output {
  'tools'?: (_hookhost_plugin_v1_ToolSpec__Output)[];
}
