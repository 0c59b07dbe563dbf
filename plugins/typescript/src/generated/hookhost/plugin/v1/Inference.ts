// Original file: proto/v1/plugin.proto

import type { Usage as _hookhost_plugin_v1_Usage, Usage__Output as _hookhost_plugin_v1_Usage__Output } from '../../../hookhost/plugin/v1/Usage';
import type { Long } from '@grpc/proto-loader';

export interface Inference {
  'sessionId'?: (string);
  'iteration'?: (number | string | Long);
  'route'?: (string);
  'model'?: (string);
  'usage'?: (_hookhost_plugin_v1_Usage | null);
  'stopReason'?: (string);
  'escalated'?: (boolean);
  'reason'?: (string);
  'durationNs'?: (number | string | Long);
  'error'?: (string);
  'providedBy'?: (string);
}

export interface Inference__Output {
  'sessionId'?: (string);
  'iteration'?: (string);
  'route'?: (string);
  'model'?: (string);
  'usage'?: (_hookhost_plugin_v1_Usage__Output);
  'stopReason'?: (string);
  'escalated'?: (boolean);
  'reason'?: (string);
  'durationNs'?: (string);
  'error'?: (string);
  'providedBy'?: (string);
}
