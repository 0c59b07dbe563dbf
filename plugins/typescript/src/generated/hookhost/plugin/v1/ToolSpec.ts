// Original file: proto/v1/plugin.proto


export interface ToolSpec {
  'name'?: (string);
  'description'?: (string);
  'inputSchema'?: (Buffer | Uint8Array | string);
}

export interface ToolSpec__Output {
  'name'?: (string);
  'description'?: (string);
  'inputSchema'?: (Buffer);
}
