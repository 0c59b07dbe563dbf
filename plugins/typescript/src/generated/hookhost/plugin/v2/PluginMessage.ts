// Original file: proto/v2/pluginv2.proto

import type { Failure as _hookhost_plugin_v2_Failure, Failure__Output as _hookhost_plugin_v2_Failure__Output } from '../../../hookhost/plugin/v2/Failure';
import type { Long } from '@grpc/proto-loader';

export interface PluginMessage {
  'id'?: (number | string | Long);
  'stage'?: (number);
  'answer'?: (Buffer | Uint8Array | string);
  'failure'?: (_hookhost_plugin_v2_Failure | null);
  'last'?: (boolean);
}

export interface PluginMessage__Output {
  'id'?: (string);
  'stage'?: (number);
  'answer'?: (Buffer);
  'failure'?: (_hookhost_plugin_v2_Failure__Output);
  'last'?: (boolean);
}
