// Original file: proto/v1/plugin.proto


export interface AddedContextResponse {
  'additionalContext'?: (string);
  '_additionalContext'?: "additionalContext";
}

export interface AddedContextResponse__Output {
  'additionalContext'?: (string);
  '_additionalContext'?: "additionalContext";
}
