// Original file: proto/v1/plugin.proto


export interface TextResponse {
  'text'?: (string);
  '_text'?: "text";
}

export interface TextResponse__Output {
  'text'?: (string);
  '_text'?: "text";
}
