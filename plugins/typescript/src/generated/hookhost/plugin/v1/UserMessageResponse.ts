// Original file: proto/v1/plugin.proto

import type { Block as _hookhost_plugin_v1_Block, Block__Output as _hookhost_plugin_v1_Block__Output } from '../../../hookhost/plugin/v1/Block';

export interface UserMessageResponse {
  'block'?: (_hookhost_plugin_v1_Block | null);
  'additionalContext'?: (string);
  '_additionalContext'?: "additionalContext";
}

export interface UserMessageResponse__Output {
  'block'?: (_hookhost_plugin_v1_Block__Output);
  'additionalContext'?: (string);
  '_additionalContext'?: "additionalContext";
}
