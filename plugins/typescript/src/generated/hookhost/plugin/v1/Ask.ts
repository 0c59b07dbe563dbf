// Original file: proto/v1/plugin.proto


export interface Ask {
  'reason'?: (string);
}

export interface Ask__Output {
  'reason'?: (string);
}
