// Original file: proto/v1/plugin.proto


export interface ConfigKeys {
  'keys'?: (string)[];
}

export interface ConfigKeys__Output {
  'keys'?: (string)[];
}
