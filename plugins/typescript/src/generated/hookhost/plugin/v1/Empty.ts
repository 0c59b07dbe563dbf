// Original file: proto/v1/plugin.proto


export interface Empty {
}

export interface Empty__Output {
}
