// Original file: proto/v1/plugin.proto


export interface SessionStart {
  'sessionId'?: (string);
  'model'?: (string);
  'route'?: (string);
}

export interface SessionStart__Output {
  'sessionId'?: (string);
  'model'?: (string);
  'route'?: (string);
}
