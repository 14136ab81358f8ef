import { ApiProperty } from '@nestjs/swagger';

/** `GET /vm/{id}/ssh_key`: the VM's own key pair's private half, for `ssh root@…`. */
export class VmSshKeyResponseDto {
  @ApiProperty({ description: 'OpenSSH Ed25519 private key (the full BEGIN/END block)' })
  ssh_private_key!: string;

  @ApiProperty({ example: 22 })
  ssh_port!: number;
}
