// Original file: proto/v1/plugin.proto

import type { Long } from '@grpc/proto-loader';

export interface Usage {
  'inputTokens'?: (number | string | Long);
  'outputTokens'?: (number | string | Long);
}

export interface Usage__Output {
  'inputTokens'?: (string);
  'outputTokens'?: (string);
}
