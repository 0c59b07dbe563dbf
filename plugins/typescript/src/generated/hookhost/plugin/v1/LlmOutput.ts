// Original file: proto/v1/plugin.proto


export interface LlmOutput {
  'sessionId'?: (string);
  'text'?: (string);
}

export interface LlmOutput__Output {
  'sessionId'?: (string);
  'text'?: (string);
}
