// Original file: proto/v1/plugin.proto

import type { RequestPatch as _hookhost_plugin_v1_RequestPatch, RequestPatch__Output as _hookhost_plugin_v1_RequestPatch__Output } from '../../../hookhost/plugin/v1/RequestPatch';

export interface Reissue {
  'patch'?: (_hookhost_plugin_v1_RequestPatch | null);
  'reason'?: (string);
}

export interface Reissue__Output {
  'patch'?: (_hookhost_plugin_v1_RequestPatch__Output);
  'reason'?: (string);
}
