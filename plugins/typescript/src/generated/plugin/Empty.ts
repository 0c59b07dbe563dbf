// Original file: proto/goplugin/grpc_controller.proto


export interface Empty {
}

export interface Empty__Output {
}
