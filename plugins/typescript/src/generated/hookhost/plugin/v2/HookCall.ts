// Original file: proto/v2/pluginv2.proto

import type { Stage as _hookhost_plugin_v2_Stage, Stage__Output as _hookhost_plugin_v2_Stage__Output } from '../../../hookhost/plugin/v2/Stage';
import type { Long } from '@grpc/proto-loader';

export interface HookCall {
  'id'?: (number | string | Long);
  'stages'?: (_hookhost_plugin_v2_Stage)[];
  'payload'?: (Buffer | Uint8Array | string);
  'payloads'?: (Buffer | Uint8Array | string)[];
}

export interface HookCall__Output {
  'id'?: (string);
  'stages'?: (_hookhost_plugin_v2_Stage__Output)[];
  'payload'?: (Buffer);
  'payloads'?: (Buffer)[];
}
