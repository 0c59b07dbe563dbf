// Original file: proto/v1/plugin.proto

import type { OutputStop as _hookhost_plugin_v1_OutputStop, OutputStop__Output as _hookhost_plugin_v1_OutputStop__Output } from '../../../hookhost/plugin/v1/OutputStop';

export interface TextResponse {
  'text'?: (string);
  'stop'?: (_hookhost_plugin_v1_OutputStop | null);
  '_text'?: "text";
}

export interface TextResponse__Output {
  'text'?: (string);
  'stop'?: (_hookhost_plugin_v1_OutputStop__Output);
  '_text'?: "text";
}
