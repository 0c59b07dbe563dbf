// Original file: proto/v1/plugin.proto

import type { RequestPatch as _hookhost_plugin_v1_RequestPatch, RequestPatch__Output as _hookhost_plugin_v1_RequestPatch__Output } from '../../../hookhost/plugin/v1/RequestPatch';

export interface RequestPatchResponse {
  'patch'?: (_hookhost_plugin_v1_RequestPatch | null);
}

export interface RequestPatchResponse__Output {
  'patch'?: (_hookhost_plugin_v1_RequestPatch__Output);
}
