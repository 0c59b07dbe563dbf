// Original file: proto/v1/plugin.proto


export interface Block {
  'message'?: (string);
}

export interface Block__Output {
  'message'?: (string);
}
