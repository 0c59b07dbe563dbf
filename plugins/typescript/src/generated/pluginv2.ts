import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { AddedContextResponse as _hookhost_plugin_v1_AddedContextResponse, AddedContextResponse__Output as _hookhost_plugin_v1_AddedContextResponse__Output } from './hookhost/plugin/v1/AddedContextResponse';
import type { ApiRequest as _hookhost_plugin_v1_ApiRequest, ApiRequest__Output as _hookhost_plugin_v1_ApiRequest__Output } from './hookhost/plugin/v1/ApiRequest';
import type { Ask as _hookhost_plugin_v1_Ask, Ask__Output as _hookhost_plugin_v1_Ask__Output } from './hookhost/plugin/v1/Ask';
import type { Block as _hookhost_plugin_v1_Block, Block__Output as _hookhost_plugin_v1_Block__Output } from './hookhost/plugin/v1/Block';
import type { ConfigKeys as _hookhost_plugin_v1_ConfigKeys, ConfigKeys__Output as _hookhost_plugin_v1_ConfigKeys__Output } from './hookhost/plugin/v1/ConfigKeys';
import type { ConfigureRequest as _hookhost_plugin_v1_ConfigureRequest, ConfigureRequest__Output as _hookhost_plugin_v1_ConfigureRequest__Output } from './hookhost/plugin/v1/ConfigureRequest';
import type { ConfigureResponse as _hookhost_plugin_v1_ConfigureResponse, ConfigureResponse__Output as _hookhost_plugin_v1_ConfigureResponse__Output } from './hookhost/plugin/v1/ConfigureResponse';
import type { DescribeRequest as _hookhost_plugin_v1_DescribeRequest, DescribeRequest__Output as _hookhost_plugin_v1_DescribeRequest__Output } from './hookhost/plugin/v1/DescribeRequest';
import type { Empty as _hookhost_plugin_v1_Empty, Empty__Output as _hookhost_plugin_v1_Empty__Output } from './hookhost/plugin/v1/Empty';
import type { HookMatchers as _hookhost_plugin_v1_HookMatchers, HookMatchers__Output as _hookhost_plugin_v1_HookMatchers__Output } from './hookhost/plugin/v1/HookMatchers';
import type { HookOptions as _hookhost_plugin_v1_HookOptions, HookOptions__Output as _hookhost_plugin_v1_HookOptions__Output } from './hookhost/plugin/v1/HookOptions';
import type { Inference as _hookhost_plugin_v1_Inference, Inference__Output as _hookhost_plugin_v1_Inference__Output } from './hookhost/plugin/v1/Inference';
import type { LlmCall as _hookhost_plugin_v1_LlmCall, LlmCall__Output as _hookhost_plugin_v1_LlmCall__Output } from './hookhost/plugin/v1/LlmCall';
import type { LlmOutput as _hookhost_plugin_v1_LlmOutput, LlmOutput__Output as _hookhost_plugin_v1_LlmOutput__Output } from './hookhost/plugin/v1/LlmOutput';
import type { LlmRequest as _hookhost_plugin_v1_LlmRequest, LlmRequest__Output as _hookhost_plugin_v1_LlmRequest__Output } from './hookhost/plugin/v1/LlmRequest';
import type { Manifest as _hookhost_plugin_v1_Manifest, Manifest__Output as _hookhost_plugin_v1_Manifest__Output } from './hookhost/plugin/v1/Manifest';
import type { Message as _hookhost_plugin_v1_Message, Message__Output as _hookhost_plugin_v1_Message__Output } from './hookhost/plugin/v1/Message';
import type { MessageList as _hookhost_plugin_v1_MessageList, MessageList__Output as _hookhost_plugin_v1_MessageList__Output } from './hookhost/plugin/v1/MessageList';
import type { ModelRequest as _hookhost_plugin_v1_ModelRequest, ModelRequest__Output as _hookhost_plugin_v1_ModelRequest__Output } from './hookhost/plugin/v1/ModelRequest';
import type { ModelResponse as _hookhost_plugin_v1_ModelResponse, ModelResponse__Output as _hookhost_plugin_v1_ModelResponse__Output } from './hookhost/plugin/v1/ModelResponse';
import type { ModelResponseResponse as _hookhost_plugin_v1_ModelResponseResponse, ModelResponseResponse__Output as _hookhost_plugin_v1_ModelResponseResponse__Output } from './hookhost/plugin/v1/ModelResponseResponse';
import type { OutputStop as _hookhost_plugin_v1_OutputStop, OutputStop__Output as _hookhost_plugin_v1_OutputStop__Output } from './hookhost/plugin/v1/OutputStop';
import type { PluginClient as _hookhost_plugin_v1_PluginClient, PluginDefinition as _hookhost_plugin_v1_PluginDefinition } from './hookhost/plugin/v1/Plugin';
import type { PreToolCallResponse as _hookhost_plugin_v1_PreToolCallResponse, PreToolCallResponse__Output as _hookhost_plugin_v1_PreToolCallResponse__Output } from './hookhost/plugin/v1/PreToolCallResponse';
import type { Reissue as _hookhost_plugin_v1_Reissue, Reissue__Output as _hookhost_plugin_v1_Reissue__Output } from './hookhost/plugin/v1/Reissue';
import type { ReissueResponse as _hookhost_plugin_v1_ReissueResponse, ReissueResponse__Output as _hookhost_plugin_v1_ReissueResponse__Output } from './hookhost/plugin/v1/ReissueResponse';
import type { RequestPatch as _hookhost_plugin_v1_RequestPatch, RequestPatch__Output as _hookhost_plugin_v1_RequestPatch__Output } from './hookhost/plugin/v1/RequestPatch';
import type { RequestPatchResponse as _hookhost_plugin_v1_RequestPatchResponse, RequestPatchResponse__Output as _hookhost_plugin_v1_RequestPatchResponse__Output } from './hookhost/plugin/v1/RequestPatchResponse';
import type { SessionEnd as _hookhost_plugin_v1_SessionEnd, SessionEnd__Output as _hookhost_plugin_v1_SessionEnd__Output } from './hookhost/plugin/v1/SessionEnd';
import type { SessionStart as _hookhost_plugin_v1_SessionStart, SessionStart__Output as _hookhost_plugin_v1_SessionStart__Output } from './hookhost/plugin/v1/SessionStart';
import type { TextResponse as _hookhost_plugin_v1_TextResponse, TextResponse__Output as _hookhost_plugin_v1_TextResponse__Output } from './hookhost/plugin/v1/TextResponse';
import type { ToolCall as _hookhost_plugin_v1_ToolCall, ToolCall__Output as _hookhost_plugin_v1_ToolCall__Output } from './hookhost/plugin/v1/ToolCall';
import type { ToolCallOutcome as _hookhost_plugin_v1_ToolCallOutcome, ToolCallOutcome__Output as _hookhost_plugin_v1_ToolCallOutcome__Output } from './hookhost/plugin/v1/ToolCallOutcome';
import type { ToolCallRequest as _hookhost_plugin_v1_ToolCallRequest, ToolCallRequest__Output as _hookhost_plugin_v1_ToolCallRequest__Output } from './hookhost/plugin/v1/ToolCallRequest';
import type { ToolList as _hookhost_plugin_v1_ToolList, ToolList__Output as _hookhost_plugin_v1_ToolList__Output } from './hookhost/plugin/v1/ToolList';
import type { ToolListRequest as _hookhost_plugin_v1_ToolListRequest, ToolListRequest__Output as _hookhost_plugin_v1_ToolListRequest__Output } from './hookhost/plugin/v1/ToolListRequest';
import type { ToolListResponse as _hookhost_plugin_v1_ToolListResponse, ToolListResponse__Output as _hookhost_plugin_v1_ToolListResponse__Output } from './hookhost/plugin/v1/ToolListResponse';
import type { ToolResult as _hookhost_plugin_v1_ToolResult, ToolResult__Output as _hookhost_plugin_v1_ToolResult__Output } from './hookhost/plugin/v1/ToolResult';
import type { ToolResultResponse as _hookhost_plugin_v1_ToolResultResponse, ToolResultResponse__Output as _hookhost_plugin_v1_ToolResultResponse__Output } from './hookhost/plugin/v1/ToolResultResponse';
import type { ToolSpec as _hookhost_plugin_v1_ToolSpec, ToolSpec__Output as _hookhost_plugin_v1_ToolSpec__Output } from './hookhost/plugin/v1/ToolSpec';
import type { Usage as _hookhost_plugin_v1_Usage, Usage__Output as _hookhost_plugin_v1_Usage__Output } from './hookhost/plugin/v1/Usage';
import type { UserMessage as _hookhost_plugin_v1_UserMessage, UserMessage__Output as _hookhost_plugin_v1_UserMessage__Output } from './hookhost/plugin/v1/UserMessage';
import type { UserMessageResponse as _hookhost_plugin_v1_UserMessageResponse, UserMessageResponse__Output as _hookhost_plugin_v1_UserMessageResponse__Output } from './hookhost/plugin/v1/UserMessageResponse';
import type { Cancel as _hookhost_plugin_v2_Cancel, Cancel__Output as _hookhost_plugin_v2_Cancel__Output } from './hookhost/plugin/v2/Cancel';
import type { Failure as _hookhost_plugin_v2_Failure, Failure__Output as _hookhost_plugin_v2_Failure__Output } from './hookhost/plugin/v2/Failure';
import type { HookCall as _hookhost_plugin_v2_HookCall, HookCall__Output as _hookhost_plugin_v2_HookCall__Output } from './hookhost/plugin/v2/HookCall';
import type { HostMessage as _hookhost_plugin_v2_HostMessage, HostMessage__Output as _hookhost_plugin_v2_HostMessage__Output } from './hookhost/plugin/v2/HostMessage';
import type { ModelStage as _hookhost_plugin_v2_ModelStage, ModelStage__Output as _hookhost_plugin_v2_ModelStage__Output } from './hookhost/plugin/v2/ModelStage';
import type { PluginClient as _hookhost_plugin_v2_PluginClient, PluginDefinition as _hookhost_plugin_v2_PluginDefinition } from './hookhost/plugin/v2/Plugin';
import type { PluginMessage as _hookhost_plugin_v2_PluginMessage, PluginMessage__Output as _hookhost_plugin_v2_PluginMessage__Output } from './hookhost/plugin/v2/PluginMessage';
import type { Stage as _hookhost_plugin_v2_Stage, Stage__Output as _hookhost_plugin_v2_Stage__Output } from './hookhost/plugin/v2/Stage';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  hookhost: {
    plugin: {
      v1: {
        AddedContextResponse: MessageTypeDefinition<_hookhost_plugin_v1_AddedContextResponse, _hookhost_plugin_v1_AddedContextResponse__Output>
        ApiRequest: MessageTypeDefinition<_hookhost_plugin_v1_ApiRequest, _hookhost_plugin_v1_ApiRequest__Output>
        Ask: MessageTypeDefinition<_hookhost_plugin_v1_Ask, _hookhost_plugin_v1_Ask__Output>
        Block: MessageTypeDefinition<_hookhost_plugin_v1_Block, _hookhost_plugin_v1_Block__Output>
        ConfigKeys: MessageTypeDefinition<_hookhost_plugin_v1_ConfigKeys, _hookhost_plugin_v1_ConfigKeys__Output>
        ConfigureRequest: MessageTypeDefinition<_hookhost_plugin_v1_ConfigureRequest, _hookhost_plugin_v1_ConfigureRequest__Output>
        ConfigureResponse: MessageTypeDefinition<_hookhost_plugin_v1_ConfigureResponse, _hookhost_plugin_v1_ConfigureResponse__Output>
        DescribeRequest: MessageTypeDefinition<_hookhost_plugin_v1_DescribeRequest, _hookhost_plugin_v1_DescribeRequest__Output>
        Empty: MessageTypeDefinition<_hookhost_plugin_v1_Empty, _hookhost_plugin_v1_Empty__Output>
        HookMatchers: MessageTypeDefinition<_hookhost_plugin_v1_HookMatchers, _hookhost_plugin_v1_HookMatchers__Output>
        HookOptions: MessageTypeDefinition<_hookhost_plugin_v1_HookOptions, _hookhost_plugin_v1_HookOptions__Output>
        Inference: MessageTypeDefinition<_hookhost_plugin_v1_Inference, _hookhost_plugin_v1_Inference__Output>
        LlmCall: MessageTypeDefinition<_hookhost_plugin_v1_LlmCall, _hookhost_plugin_v1_LlmCall__Output>
        LlmOutput: MessageTypeDefinition<_hookhost_plugin_v1_LlmOutput, _hookhost_plugin_v1_LlmOutput__Output>
        LlmRequest: MessageTypeDefinition<_hookhost_plugin_v1_LlmRequest, _hookhost_plugin_v1_LlmRequest__Output>
        Manifest: MessageTypeDefinition<_hookhost_plugin_v1_Manifest, _hookhost_plugin_v1_Manifest__Output>
        Message: MessageTypeDefinition<_hookhost_plugin_v1_Message, _hookhost_plugin_v1_Message__Output>
        MessageList: MessageTypeDefinition<_hookhost_plugin_v1_MessageList, _hookhost_plugin_v1_MessageList__Output>
        ModelRequest: MessageTypeDefinition<_hookhost_plugin_v1_ModelRequest, _hookhost_plugin_v1_ModelRequest__Output>
        ModelResponse: MessageTypeDefinition<_hookhost_plugin_v1_ModelResponse, _hookhost_plugin_v1_ModelResponse__Output>
        ModelResponseResponse: MessageTypeDefinition<_hookhost_plugin_v1_ModelResponseResponse, _hookhost_plugin_v1_ModelResponseResponse__Output>
        OutputStop: MessageTypeDefinition<_hookhost_plugin_v1_OutputStop, _hookhost_plugin_v1_OutputStop__Output>
        Plugin: SubtypeConstructor<typeof grpc.Client, _hookhost_plugin_v1_PluginClient> & { service: _hookhost_plugin_v1_PluginDefinition }
        PreToolCallResponse: MessageTypeDefinition<_hookhost_plugin_v1_PreToolCallResponse, _hookhost_plugin_v1_PreToolCallResponse__Output>
        Reissue: MessageTypeDefinition<_hookhost_plugin_v1_Reissue, _hookhost_plugin_v1_Reissue__Output>
        ReissueResponse: MessageTypeDefinition<_hookhost_plugin_v1_ReissueResponse, _hookhost_plugin_v1_ReissueResponse__Output>
        RequestPatch: MessageTypeDefinition<_hookhost_plugin_v1_RequestPatch, _hookhost_plugin_v1_RequestPatch__Output>
        RequestPatchResponse: MessageTypeDefinition<_hookhost_plugin_v1_RequestPatchResponse, _hookhost_plugin_v1_RequestPatchResponse__Output>
        SessionEnd: MessageTypeDefinition<_hookhost_plugin_v1_SessionEnd, _hookhost_plugin_v1_SessionEnd__Output>
        SessionStart: MessageTypeDefinition<_hookhost_plugin_v1_SessionStart, _hookhost_plugin_v1_SessionStart__Output>
        TextResponse: MessageTypeDefinition<_hookhost_plugin_v1_TextResponse, _hookhost_plugin_v1_TextResponse__Output>
        ToolCall: MessageTypeDefinition<_hookhost_plugin_v1_ToolCall, _hookhost_plugin_v1_ToolCall__Output>
        ToolCallOutcome: MessageTypeDefinition<_hookhost_plugin_v1_ToolCallOutcome, _hookhost_plugin_v1_ToolCallOutcome__Output>
        ToolCallRequest: MessageTypeDefinition<_hookhost_plugin_v1_ToolCallRequest, _hookhost_plugin_v1_ToolCallRequest__Output>
        ToolList: MessageTypeDefinition<_hookhost_plugin_v1_ToolList, _hookhost_plugin_v1_ToolList__Output>
        ToolListRequest: MessageTypeDefinition<_hookhost_plugin_v1_ToolListRequest, _hookhost_plugin_v1_ToolListRequest__Output>
        ToolListResponse: MessageTypeDefinition<_hookhost_plugin_v1_ToolListResponse, _hookhost_plugin_v1_ToolListResponse__Output>
        ToolResult: MessageTypeDefinition<_hookhost_plugin_v1_ToolResult, _hookhost_plugin_v1_ToolResult__Output>
        ToolResultResponse: MessageTypeDefinition<_hookhost_plugin_v1_ToolResultResponse, _hookhost_plugin_v1_ToolResultResponse__Output>
        ToolSpec: MessageTypeDefinition<_hookhost_plugin_v1_ToolSpec, _hookhost_plugin_v1_ToolSpec__Output>
        Usage: MessageTypeDefinition<_hookhost_plugin_v1_Usage, _hookhost_plugin_v1_Usage__Output>
        UserMessage: MessageTypeDefinition<_hookhost_plugin_v1_UserMessage, _hookhost_plugin_v1_UserMessage__Output>
        UserMessageResponse: MessageTypeDefinition<_hookhost_plugin_v1_UserMessageResponse, _hookhost_plugin_v1_UserMessageResponse__Output>
      }
      v2: {
        Cancel: MessageTypeDefinition<_hookhost_plugin_v2_Cancel, _hookhost_plugin_v2_Cancel__Output>
        Failure: MessageTypeDefinition<_hookhost_plugin_v2_Failure, _hookhost_plugin_v2_Failure__Output>
        HookCall: MessageTypeDefinition<_hookhost_plugin_v2_HookCall, _hookhost_plugin_v2_HookCall__Output>
        HostMessage: MessageTypeDefinition<_hookhost_plugin_v2_HostMessage, _hookhost_plugin_v2_HostMessage__Output>
        ModelStage: MessageTypeDefinition<_hookhost_plugin_v2_ModelStage, _hookhost_plugin_v2_ModelStage__Output>
        Plugin: SubtypeConstructor<typeof grpc.Client, _hookhost_plugin_v2_PluginClient> & { service: _hookhost_plugin_v2_PluginDefinition }
        PluginMessage: MessageTypeDefinition<_hookhost_plugin_v2_PluginMessage, _hookhost_plugin_v2_PluginMessage__Output>
        Stage: MessageTypeDefinition<_hookhost_plugin_v2_Stage, _hookhost_plugin_v2_Stage__Output>
      }
    }
  }
}

