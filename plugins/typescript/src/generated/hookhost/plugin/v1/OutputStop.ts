// Original file: proto/v1/plugin.proto


export interface OutputStop {
  'message'?: (string);
}

export interface OutputStop__Output {
  'message'?: (string);
}
