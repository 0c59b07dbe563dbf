// Original file: proto/v2/pluginv2.proto

import type { LlmCall as _hookhost_plugin_v1_LlmCall, LlmCall__Output as _hookhost_plugin_v1_LlmCall__Output } from '../../../hookhost/plugin/v1/LlmCall';

export interface ModelStage {
  'call'?: (_hookhost_plugin_v1_LlmCall | null);
  'fieldsSet'?: (string)[];
  'text'?: (string);
}

export interface ModelStage__Output {
  'call'?: (_hookhost_plugin_v1_LlmCall__Output);
  'fieldsSet'?: (string)[];
  'text'?: (string);
}
