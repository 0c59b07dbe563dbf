// Original file: proto/v1/plugin.proto


export interface ConfigureResponse {
}

export interface ConfigureResponse__Output {
}
