// Original file: proto/v1/plugin.proto


export interface HookMatchers {
  'hook'?: (string);
  'matchers'?: (string)[];
}

export interface HookMatchers__Output {
  'hook'?: (string);
  'matchers'?: (string)[];
}
