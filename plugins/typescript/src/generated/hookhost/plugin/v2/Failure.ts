// Original file: proto/v2/pluginv2.proto


// Original file: proto/v2/pluginv2.proto

export const _hookhost_plugin_v2_Failure_Kind = {
  KIND_UNSPECIFIED: 'KIND_UNSPECIFIED',
  ERROR: 'ERROR',
  PANIC: 'PANIC',
  DEADLINE_EXCEEDED: 'DEADLINE_EXCEEDED',
  CANCELLED: 'CANCELLED',
  UNKNOWN_HOOK: 'UNKNOWN_HOOK',
  BAD_REQUEST: 'BAD_REQUEST',
} as const;

export type _hookhost_plugin_v2_Failure_Kind =
  | 'KIND_UNSPECIFIED'
  | 0
  | 'ERROR'
  | 1
  | 'PANIC'
  | 2
  | 'DEADLINE_EXCEEDED'
  | 3
  | 'CANCELLED'
  | 4
  | 'UNKNOWN_HOOK'
  | 5
  | 'BAD_REQUEST'
  | 6

export type _hookhost_plugin_v2_Failure_Kind__Output = typeof _hookhost_plugin_v2_Failure_Kind[keyof typeof _hookhost_plugin_v2_Failure_Kind]

export interface Failure {
  'kind'?: (_hookhost_plugin_v2_Failure_Kind);
  'message'?: (string);
}

export interface Failure__Output {
  'kind'?: (_hookhost_plugin_v2_Failure_Kind__Output);
  'message'?: (string);
}
