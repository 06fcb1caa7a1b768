"""ops-nn's aclnnLeakyReluBackward sample (test_aclnn_leaky_relu_backward.cpp), line by line.

Run: ``python examples/test_aclnn_leaky_relu_backward.py`` or ``opsnn demo``.
Prints result[0..3] = 2, 3, 4, 5: self is all positive, so the gradient passes unchanged.
"""

import opsnn.acl as acl
from opsnn import aclnn
from opsnn.samples.common import check_ret, create_acl_tensor, finalize, init, print_result, run_as_script


def main(emit=print) -> int:
    # 1. (fixed pattern) device/stream initialisation
    device_id = 0
    stream = init(device_id)

    # 2. build inputs and outputs
    grad_shape = [4]
    self_shape = [4]
    out_shape = [4]
    grad_host_data = [2, 3, 4, 5]
    self_host_data = [1, 2, 3, 4]
    out_host_data = [0, 0, 0, 0]
    negative_slope_value = 0.01
    self_is_result_value = True
    grad_device_addr, grad = create_acl_tensor(grad_host_data, grad_shape, acl.ACL_FLOAT)
    self_device_addr, self_ = create_acl_tensor(self_host_data, self_shape, acl.ACL_FLOAT)
    negative_slope = acl.create_scalar(negative_slope_value, acl.ACL_FLOAT)
    check_ret("aclCreateScalar", 0 if negative_slope is not None else acl.ACLNN_ERR_PARAM_NULLPTR)
    out_device_addr, out = create_acl_tensor(out_host_data, out_shape, acl.ACL_FLOAT)

    # 3. call the aclnn API: the first phase plans and returns the workspace size
    workspace_size, executor, ret = aclnn.aclnnLeakyReluBackwardGetWorkspaceSize(
        grad, self_, negative_slope, self_is_result_value, out)
    check_ret("aclnnLeakyReluBackwardGetWorkspaceSize", ret)
    workspace_addr = None
    if workspace_size > 0:
        workspace_addr, ret = acl.rt.malloc(workspace_size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        check_ret("allocate workspace", ret)
    # the second phase queues the computation on the stream
    ret = aclnn.aclnnLeakyReluBackward(workspace_addr, workspace_size, executor, stream)
    check_ret("aclnnLeakyReluBackward", ret)

    # 4. (fixed pattern) wait for the stream
    check_ret("aclrtSynchronizeStream", acl.rt.synchronize_stream(stream))

    # 5. copy the result back to the host and print it
    print_result(out_device_addr, out_shape, acl.ACL_FLOAT, emit)

    # 6. release aclTensor and aclScalar
    acl.destroy_tensor(grad)
    acl.destroy_tensor(self_)
    acl.destroy_scalar(negative_slope)
    acl.destroy_tensor(out)

    # 7. release device resources
    addrs = [grad_device_addr, self_device_addr, out_device_addr]
    finalize(device_id, stream, addrs + ([workspace_addr] if workspace_size > 0 else []))
    return 0


if __name__ == "__main__":
    run_as_script(main, "opsnn.samples.leaky_relu_backward")
