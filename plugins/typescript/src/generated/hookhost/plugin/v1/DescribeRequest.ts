// Original file: proto/v1/plugin.proto


export interface DescribeRequest {
}

export interface DescribeRequest__Output {
}
