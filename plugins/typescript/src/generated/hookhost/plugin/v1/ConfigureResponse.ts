// Original file: proto/v1/plugin.proto


export interface ConfigureResponse {
  'unservedHooks'?: (string)[];
}

export interface ConfigureResponse__Output {
  'unservedHooks'?: (string)[];
}
