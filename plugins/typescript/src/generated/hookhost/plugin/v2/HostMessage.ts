// Original file: proto/v2/pluginv2.proto

import type { HookCall as _hookhost_plugin_v2_HookCall, HookCall__Output as _hookhost_plugin_v2_HookCall__Output } from '../../../hookhost/plugin/v2/HookCall';
import type { Cancel as _hookhost_plugin_v2_Cancel, Cancel__Output as _hookhost_plugin_v2_Cancel__Output } from '../../../hookhost/plugin/v2/Cancel';

export interface HostMessage {
  'call'?: (_hookhost_plugin_v2_HookCall | null);
  'cancel'?: (_hookhost_plugin_v2_Cancel | null);
  'kind'?: "call"|"cancel";
}

export interface HostMessage__Output {
  'call'?: (_hookhost_plugin_v2_HookCall__Output);
  'cancel'?: (_hookhost_plugin_v2_Cancel__Output);
  'kind'?: "call"|"cancel";
}
