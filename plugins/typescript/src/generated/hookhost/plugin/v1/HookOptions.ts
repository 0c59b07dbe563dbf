// Original file: proto/v1/plugin.proto

import type { Long } from '@grpc/proto-loader';

export interface HookOptions {
  'hook'?: (string);
  'windowBytes'?: (number | string | Long);
  'overlapBytes'?: (number | string | Long);
  'decideAfterBytes'?: (number | string | Long);
}

export interface HookOptions__Output {
  'hook'?: (string);
  'windowBytes'?: (string);
  'overlapBytes'?: (string);
  'decideAfterBytes'?: (string);
}
