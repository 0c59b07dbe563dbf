// Original file: proto/v1/plugin.proto

import type { Message as _hookhost_plugin_v1_Message, Message__Output as _hookhost_plugin_v1_Message__Output } from '../../../hookhost/plugin/v1/Message';
import type { Usage as _hookhost_plugin_v1_Usage, Usage__Output as _hookhost_plugin_v1_Usage__Output } from '../../../hookhost/plugin/v1/Usage';

export interface ModelResponse {
  'model'?: (string);
  'message'?: (_hookhost_plugin_v1_Message | null);
  'usage'?: (_hookhost_plugin_v1_Usage | null);
  'stopReason'?: (string);
}

export interface ModelResponse__Output {
  'model'?: (string);
  'message'?: (_hookhost_plugin_v1_Message__Output);
  'usage'?: (_hookhost_plugin_v1_Usage__Output);
  'stopReason'?: (string);
}
