// Original file: proto/v1/plugin.proto

import type { Block as _hookhost_plugin_v1_Block, Block__Output as _hookhost_plugin_v1_Block__Output } from '../../../hookhost/plugin/v1/Block';
import type { Ask as _hookhost_plugin_v1_Ask, Ask__Output as _hookhost_plugin_v1_Ask__Output } from '../../../hookhost/plugin/v1/Ask';

export interface PreToolCallResponse {
  'block'?: (_hookhost_plugin_v1_Block | null);
  'modifiedArgs'?: (Buffer | Uint8Array | string);
  'ask'?: (_hookhost_plugin_v1_Ask | null);
  '_modifiedArgs'?: "modifiedArgs";
}

export interface PreToolCallResponse__Output {
  'block'?: (_hookhost_plugin_v1_Block__Output);
  'modifiedArgs'?: (Buffer);
  'ask'?: (_hookhost_plugin_v1_Ask__Output);
  '_modifiedArgs'?: "modifiedArgs";
}
