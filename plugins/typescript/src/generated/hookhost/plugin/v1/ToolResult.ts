// Original file: proto/v1/plugin.proto


export interface ToolResult {
  'content'?: (string);
  'isError'?: (boolean);
}

export interface ToolResult__Output {
  'content'?: (string);
  'isError'?: (boolean);
}
