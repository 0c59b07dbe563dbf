// Original file: proto/v1/plugin.proto

import type { Reissue as _hookhost_plugin_v1_Reissue, Reissue__Output as _hookhost_plugin_v1_Reissue__Output } from '../../../hookhost/plugin/v1/Reissue';

export interface ReissueResponse {
  'reissue'?: (_hookhost_plugin_v1_Reissue | null);
}

export interface ReissueResponse__Output {
  'reissue'?: (_hookhost_plugin_v1_Reissue__Output);
}
