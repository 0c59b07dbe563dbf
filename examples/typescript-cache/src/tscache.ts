#!/usr/bin/node
// The tscache plugin's executable: the host runs this file (see README.md).
import { serve } from "@hookhost/plugin";
import { tscache } from "./plugin";

serve(tscache());
