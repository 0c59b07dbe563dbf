// Original file: proto/v2/pluginv2.proto

import type { Long } from '@grpc/proto-loader';

export interface Cancel {
  'id'?: (number | string | Long);
}

export interface Cancel__Output {
  'id'?: (string);
}
