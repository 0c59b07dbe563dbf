// Original file: proto/v1/plugin.proto

import type { Message as _hookhost_plugin_v1_Message, Message__Output as _hookhost_plugin_v1_Message__Output } from '../../../hookhost/plugin/v1/Message';

export interface MessageList {
  'messages'?: (_hookhost_plugin_v1_Message)[];
}

export interface MessageList__Output {
  'messages'?: (_hookhost_plugin_v1_Message__Output)[];
}
