// Original file: proto/v1/plugin.proto

import type { ToolResult as _hookhost_plugin_v1_ToolResult, ToolResult__Output as _hookhost_plugin_v1_ToolResult__Output } from '../../../hookhost/plugin/v1/ToolResult';
import type { Long } from '@grpc/proto-loader';

export interface ToolCallOutcome {
  'sessionId'?: (string);
  'callId'?: (string);
  'name'?: (string);
  'arguments'?: (Buffer | Uint8Array | string);
  'result'?: (_hookhost_plugin_v1_ToolResult | null);
  'status'?: (string);
  'durationNs'?: (number | string | Long);
  'origin'?: (string);
}

export interface ToolCallOutcome__Output {
  'sessionId'?: (string);
  'callId'?: (string);
  'name'?: (string);
  'arguments'?: (Buffer);
  'result'?: (_hookhost_plugin_v1_ToolResult__Output);
  'status'?: (string);
  'durationNs'?: (string);
  'origin'?: (string);
}
