// Original file: proto/v1/plugin.proto

import type { Usage as _hookhost_plugin_v1_Usage, Usage__Output as _hookhost_plugin_v1_Usage__Output } from '../../../hookhost/plugin/v1/Usage';
import type { Long } from '@grpc/proto-loader';

export interface SessionEnd {
  'sessionId'?: (string);
  'model'?: (string);
  'route'?: (string);
  'reason'?: (string);
  'iterations'?: (number | string | Long);
  'usage'?: (_hookhost_plugin_v1_Usage | null);
  'error'?: (string);
}

export interface SessionEnd__Output {
  'sessionId'?: (string);
  'model'?: (string);
  'route'?: (string);
  'reason'?: (string);
  'iterations'?: (string);
  'usage'?: (_hookhost_plugin_v1_Usage__Output);
  'error'?: (string);
}
