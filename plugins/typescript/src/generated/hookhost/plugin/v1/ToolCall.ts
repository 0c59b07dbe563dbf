// Original file: proto/v1/plugin.proto


export interface ToolCall {
  'id'?: (string);
  'name'?: (string);
  'arguments'?: (Buffer | Uint8Array | string);
}

export interface ToolCall__Output {
  'id'?: (string);
  'name'?: (string);
  'arguments'?: (Buffer);
}
