// Original file: proto/v1/plugin.proto

import type { Long } from '@grpc/proto-loader';

export interface UserMessage {
  'sessionId'?: (string);
  'route'?: (string);
  'index'?: (number | string | Long);
  'text'?: (string);
}

export interface UserMessage__Output {
  'sessionId'?: (string);
  'route'?: (string);
  'index'?: (string);
  'text'?: (string);
}
