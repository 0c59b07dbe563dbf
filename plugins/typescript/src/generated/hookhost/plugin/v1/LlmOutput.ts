// Original file: proto/v1/plugin.proto

import type { Long } from '@grpc/proto-loader';

export interface LlmOutput {
  'sessionId'?: (string);
  'text'?: (string);
  'windowed'?: (boolean);
  'offset'?: (number | string | Long);
  'overlap'?: (number | string | Long);
  'last'?: (boolean);
}

export interface LlmOutput__Output {
  'sessionId'?: (string);
  'text'?: (string);
  'windowed'?: (boolean);
  'offset'?: (string);
  'overlap'?: (string);
  'last'?: (boolean);
}
