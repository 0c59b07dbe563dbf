// Original file: proto/v1/plugin.proto


export interface ToolCallRequest {
  'sessionId'?: (string);
  'callId'?: (string);
  'name'?: (string);
  'arguments'?: (Buffer | Uint8Array | string);
  'origin'?: (string);
}

export interface ToolCallRequest__Output {
  'sessionId'?: (string);
  'callId'?: (string);
  'name'?: (string);
  'arguments'?: (Buffer);
  'origin'?: (string);
}
