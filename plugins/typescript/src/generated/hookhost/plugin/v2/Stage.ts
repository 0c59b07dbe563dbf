// Original file: proto/v2/pluginv2.proto

import type { Long } from '@grpc/proto-loader';

export interface Stage {
  'hook'?: (string);
  'timeoutNs'?: (number | string | Long);
}

export interface Stage__Output {
  'hook'?: (string);
  'timeoutNs'?: (string);
}
