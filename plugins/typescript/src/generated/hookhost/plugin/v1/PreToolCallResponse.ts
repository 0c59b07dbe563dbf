// Original file: proto/v1/plugin.proto

import type { Block as _hookhost_plugin_v1_Block, Block__Output as _hookhost_plugin_v1_Block__Output } from '../../../hookhost/plugin/v1/Block';

export interface PreToolCallResponse {
  'block'?: (_hookhost_plugin_v1_Block | null);
  'modifiedArgs'?: (Buffer | Uint8Array | string);
  '_modifiedArgs'?: "modifiedArgs";
}

export interface PreToolCallResponse__Output {
  'block'?: (_hookhost_plugin_v1_Block__Output);
  'modifiedArgs'?: (Buffer);
  '_modifiedArgs'?: "modifiedArgs";
}
