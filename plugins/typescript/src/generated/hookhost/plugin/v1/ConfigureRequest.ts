// Original file: proto/v1/plugin.proto


export interface ConfigureRequest {
  'configJson'?: (Buffer | Uint8Array | string);
}

export interface ConfigureRequest__Output {
  'configJson'?: (Buffer);
}
